-- The iceberg display rule in one place (issue 27, ADR 0056): each child order row keeps
-- what it adds to its book level (`shown`: 0 unless it rests), written by the engine from
-- the domain's `order::shown_quantity`. The triggers add and subtract it; they no longer
-- read the instrument's block, and no SQL spells the rule out. A new minimum block is
-- written to each resting iceberg by the engine, and the update trigger moves the levels.

alter table child_order add column shown integer not null default 0 check (shown >= 0);

drop trigger child_order_inserted;
drop trigger child_order_updated;

update child_order
   set shown = (select case when child_order.iceberg and child_order.quantity > i.min_quantity then i.min_quantity
                            else child_order.quantity end
                  from instrument i where i.instrument_id = child_order.instrument_id)
 where rests;

create trigger child_order_inserted after insert on child_order
begin
    update parent_order
       set working_quantity = working_quantity + new.working_quantity,
           matched_quantity = matched_quantity + new.matched_quantity
     where parent_order_id = new.parent_order_id
       and (new.working_quantity <> 0 or new.matched_quantity <> 0);
    insert into book_level (instrument_id, direction, price, company_id, shown)
    select new.instrument_id, new.direction, new.price, new.company_id, new.shown
     where new.shown <> 0
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
       set shown = shown - old.shown
     where old.shown <> 0 and instrument_id = old.instrument_id and direction = old.direction and price = old.price
       and company_id = old.company_id;
    delete from book_level
     where old.shown <> 0 and instrument_id = old.instrument_id and direction = old.direction and price = old.price
       and company_id = old.company_id and shown = 0;
    insert into book_level (instrument_id, direction, price, company_id, shown)
    select new.instrument_id, new.direction, new.price, new.company_id, new.shown
     where new.shown <> 0
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
end;
