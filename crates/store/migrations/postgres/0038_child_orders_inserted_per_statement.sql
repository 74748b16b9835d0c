-- A statement's new child orders move their parents' counters and their book levels
-- once per statement, not once per row (issue 27, ADR 0053). The group commit (ADR 0040)
-- writes a batch of orders in one statement; the row trigger then ran four statements
-- per order (the parent's counters, the kill-switch check, the instrument's block size,
-- the level's upsert). Now one statement of orders runs one grouped update of the
-- parents, one check of the companies and one upsert of the levels, each in key order,
-- so that statements writing orders at once wait on each other but never in a cycle.
-- Updates stay on the row trigger: they change one order at a time, and it subtracts what
-- the old row showed.

-- The iceberg display rule (the domain's `order::shown_quantity`), once for both triggers;
-- a SQL function PostgreSQL inlines into the statements that call it.
create function shown_quantity(iceberg boolean, quantity bigint, min_block bigint) returns bigint
    language sql immutable parallel safe
    as $$ select case when iceberg and quantity > min_block then min_block else quantity end $$;

create or replace function child_order_written() returns trigger language plpgsql as $$
declare
    min_block bigint;
begin
    if new.working_quantity <> old.working_quantity or new.matched_quantity <> old.matched_quantity then
        update parent_order
           set working_quantity = working_quantity + new.working_quantity - old.working_quantity,
               matched_quantity = matched_quantity + new.matched_quantity - old.matched_quantity
         where parent_order_id = new.parent_order_id;
    end if;
    if old.rests then
        select min_quantity into min_block from instrument where instrument_id = old.instrument_id;
        update book_level
           set shown = shown - (shown_quantity(old.iceberg, old.quantity, min_block))
         where instrument_id = old.instrument_id and direction = old.direction and price = old.price
           and company_id = old.company_id;
        delete from book_level
         where instrument_id = old.instrument_id and direction = old.direction and price = old.price
           and company_id = old.company_id and shown = 0;
    end if;
    if new.rests then
        if min_block is null or new.instrument_id <> old.instrument_id then
            select min_quantity into min_block from instrument where instrument_id = new.instrument_id;
        end if;
        insert into book_level (instrument_id, direction, price, company_id, shown)
        values (new.instrument_id, new.direction, new.price, new.company_id,
                shown_quantity(new.iceberg, new.quantity, min_block))
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    end if;
    return null;
end;
$$;

drop trigger "A_child_order_written" on child_order;
create trigger "A_child_order_written" after update on child_order
    for each row execute function child_order_written();

-- The kill switch (ADR 0021) is checked after the parents' counters are updated, as the
-- row trigger did: an insert that updated a parent before the switch locked the
-- company's parents is seen by the switch's sweep; one that waited for the switch's lock
-- reads the committed stop here (plpgsql takes a new snapshot per statement).
create function child_orders_inserted() returns trigger language plpgsql as $$
declare
    stopped uuid;
begin
    -- Parents first, then levels, each in key order: statements writing orders at once
    -- (the order writers, takes, RFQs) may wait on each other, never in a cycle.
    perform 1 from parent_order
     where parent_order_id in (select parent_order_id from inserted
                                where working_quantity <> 0 or matched_quantity <> 0)
     order by parent_order_id
       for no key update;
    update parent_order p
       set working_quantity = p.working_quantity + n.working,
           matched_quantity = p.matched_quantity + n.matched
      from (select parent_order_id, sum(working_quantity) as working, sum(matched_quantity) as matched
              from inserted group by parent_order_id
            having sum(working_quantity) <> 0 or sum(matched_quantity) <> 0) n
     where p.parent_order_id = n.parent_order_id;
    select i.company_id into stopped
      from inserted i join company c on c.company_id = i.company_id
     where i.working_quantity <> 0 and c.trading_stopped_at is not null
     limit 1;
    if found then
        raise exception 'trading is stopped for company %', stopped
            using errcode = 'check_violation', constraint = 'company_trading_stopped';
    end if;
    insert into book_level (instrument_id, direction, price, company_id, shown)
    select i.instrument_id, i.direction, i.price, i.company_id,
           sum(shown_quantity(i.iceberg, i.quantity, s.min_quantity))
      from inserted i join instrument s on s.instrument_id = i.instrument_id
     where i.rests
     group by i.instrument_id, i.direction, i.price, i.company_id
     order by i.instrument_id, i.direction, i.price, i.company_id
    on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    return null;
end;
$$;

create trigger "A_child_orders_inserted" after insert on child_order
    referencing new table as inserted
    for each statement execute function child_orders_inserted();
