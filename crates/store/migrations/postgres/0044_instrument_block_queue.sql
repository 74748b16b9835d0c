-- A change of block waits for the writes holding it, and no longer for a stream of them
-- (ADR 0064). A row lock lets a new `for share` in while an update of the row waits, so a
-- steady stream of iceberg writes held a change of block off until `lock_timeout`. Each
-- hold now first takes the instrument's block lock in shared mode, and a change in
-- exclusive mode, before the row: PostgreSQL's lock manager queues a shared request
-- behind an exclusive one that waits, so the holds asked for after the change wait for it
-- and read the new block, and the change waits only for the holds before it.

-- The advisory lock of an instrument's block: its id hashed into the 64-bit key space.
create function instrument_block_key(id uuid) returns bigint language sql immutable parallel safe as $$
    select hashtextextended('instrument_block ' || id::text, 0)
$$;

-- Takes the block's lock in shared mode, until the transaction ends; true, to be a
-- condition of the statement that then locks the block's row.
create function instrument_block_held(id uuid) returns boolean language plpgsql volatile as $$
begin
    perform pg_advisory_xact_lock_shared(instrument_block_key(id));
    return true;
end;
$$;

create or replace function instrument_block_kept() returns trigger language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        perform pg_advisory_xact_lock(instrument_block_key(new.instrument_id));
    end if;
    insert into instrument_block (instrument_id, min_quantity) values (new.instrument_id, new.min_quantity)
    on conflict (instrument_id) do update set min_quantity = excluded.min_quantity;
    return null;
end;
$$;
