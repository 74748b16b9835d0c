-- The minimum block icebergs are shown by, on a row of its own (ADR 0060): a write of a
-- resting iceberg holds this row (`for share`) and a change of block updates it, so each
-- waits for the other (ADR 0057); a band move, the feed's touch and the stale flag update
-- the instrument's row and no longer wait for iceberg writes, nor a stream of them for
-- ever. Kept by the instrument's own writes, in the same transaction.
create table instrument_block (
    instrument_id uuid primary key references instrument (instrument_id),
    min_quantity bigint not null
);

insert into instrument_block (instrument_id, min_quantity)
select instrument_id, min_quantity from instrument;

create function instrument_block_kept() returns trigger language plpgsql as $$
begin
    insert into instrument_block (instrument_id, min_quantity) values (new.instrument_id, new.min_quantity)
    on conflict (instrument_id) do update set min_quantity = excluded.min_quantity;
    return null;
end;
$$;

create trigger instrument_block_inserted after insert on instrument
    for each row execute function instrument_block_kept();

-- Only a change of the block: every other write of the instrument leaves this row alone.
create trigger instrument_block_changed after update of min_quantity on instrument
    for each row when (old.min_quantity <> new.min_quantity) execute function instrument_block_kept();
