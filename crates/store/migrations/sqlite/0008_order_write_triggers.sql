-- One statement per child-order write (ADR 0019): each row carries what it adds to its
-- parent's counters and whether it rests in the book, written by the engine from the
-- domain's states, and triggers move the counters and the book levels in the same
-- statement. The back-fill below runs once over rows written before these columns.
alter table child_order add column working_quantity integer not null default 0 check (working_quantity >= 0);
alter table child_order add column matched_quantity integer not null default 0 check (matched_quantity >= 0);
alter table child_order add column rests integer not null default 0 check (rests in (0, 1));

update child_order set
    working_quantity = case when state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE') then quantity else 0 end,
    matched_quantity = case when state in ('MATCHED', 'BROKER_ACCEPTED', 'BROKER_FILLED', 'PARTIAL_BROKER_ACCEPTED',
                                           'PARTIAL_BROKER_FILLED') then quantity else 0 end,
    rests = state = 'WORKING';

create trigger child_order_inserted after insert on child_order
begin
    update parent_order
       set working_quantity = working_quantity + new.working_quantity,
           matched_quantity = matched_quantity + new.matched_quantity
     where parent_order_id = new.parent_order_id
       and (new.working_quantity <> 0 or new.matched_quantity <> 0);
    insert into book_level (instrument_id, direction, price, company_id, shown)
    select new.instrument_id, new.direction, new.price, new.company_id,
           case when new.iceberg and new.quantity > i.min_quantity then i.min_quantity else new.quantity end
      from instrument i
     where i.instrument_id = new.instrument_id and new.rests
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
end;

create trigger child_order_updated after update on child_order
begin
    update parent_order
       set working_quantity = working_quantity + new.working_quantity - old.working_quantity,
           matched_quantity = matched_quantity + new.matched_quantity - old.matched_quantity
     where parent_order_id = new.parent_order_id
       and (new.working_quantity <> old.working_quantity or new.matched_quantity <> old.matched_quantity);
    update book_level
       set shown = shown - (select case when old.iceberg and old.quantity > i.min_quantity then i.min_quantity
                                        else old.quantity end
                              from instrument i where i.instrument_id = old.instrument_id)
     where old.rests and instrument_id = old.instrument_id and direction = old.direction and price = old.price
       and company_id = old.company_id;
    delete from book_level
     where old.rests and instrument_id = old.instrument_id and direction = old.direction and price = old.price
       and company_id = old.company_id and shown = 0;
    insert into book_level (instrument_id, direction, price, company_id, shown)
    select new.instrument_id, new.direction, new.price, new.company_id,
           case when new.iceberg and new.quantity > i.min_quantity then i.min_quantity else new.quantity end
      from instrument i
     where i.instrument_id = new.instrument_id and new.rests
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
end;
