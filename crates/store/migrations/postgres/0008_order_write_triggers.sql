-- One statement per child-order write (ADR 0019): each row carries what it adds to its
-- parent's counters and whether it rests in the book, written by the engine from the
-- domain's states, and triggers move the counters and the book levels in the same
-- statement. The back-fill below runs once over rows written before these columns.
alter table child_order add column working_quantity bigint not null default 0 check (working_quantity >= 0);
alter table child_order add column matched_quantity bigint not null default 0 check (matched_quantity >= 0);
alter table child_order add column rests boolean not null default false;

update child_order set
    working_quantity = case when state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE') then quantity else 0 end,
    matched_quantity = case when state in ('MATCHED', 'BROKER_ACCEPTED', 'BROKER_FILLED', 'PARTIAL_BROKER_ACCEPTED',
                                           'PARTIAL_BROKER_FILLED') then quantity else 0 end,
    rests = state = 'WORKING';

-- What a resting order shows: an iceberg at most the instrument's minimum block.
create function book_shown(instrument uuid, iceberg boolean, quantity bigint) returns bigint
language sql stable as $$
    select case when iceberg and quantity > i.min_quantity then i.min_quantity else quantity end
      from instrument i where i.instrument_id = instrument
$$;

create function child_order_written() returns trigger language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        if new.working_quantity <> old.working_quantity or new.matched_quantity <> old.matched_quantity then
            update parent_order
               set working_quantity = working_quantity + new.working_quantity - old.working_quantity,
                   matched_quantity = matched_quantity + new.matched_quantity - old.matched_quantity
             where parent_order_id = new.parent_order_id;
        end if;
        if old.rests then
            update book_level set shown = shown - book_shown(old.instrument_id, old.iceberg, old.quantity)
             where instrument_id = old.instrument_id and direction = old.direction and price = old.price
               and company_id = old.company_id;
            delete from book_level
             where instrument_id = old.instrument_id and direction = old.direction and price = old.price
               and company_id = old.company_id and shown = 0;
        end if;
    elsif new.working_quantity <> 0 or new.matched_quantity <> 0 then
        update parent_order
           set working_quantity = working_quantity + new.working_quantity,
               matched_quantity = matched_quantity + new.matched_quantity
         where parent_order_id = new.parent_order_id;
    end if;
    if new.rests then
        insert into book_level (instrument_id, direction, price, company_id, shown)
        values (new.instrument_id, new.direction, new.price, new.company_id,
                book_shown(new.instrument_id, new.iceberg, new.quantity))
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    end if;
    return null;
end;
$$;

create trigger child_order_written after insert or update on child_order
    for each row execute function child_order_written();
