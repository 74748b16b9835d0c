-- The iceberg display rule in one place (issue 27, ADR 0056): each child order row keeps
-- what it adds to its book level (`shown`: 0 unless it rests), written by the engine from
-- the domain's `order::shown_quantity`. The triggers add and subtract it; they no longer
-- read the instrument's block, and no SQL spells the rule out. A new minimum block is
-- written to each resting iceberg by the engine, and this row trigger moves the levels.

alter table child_order add column shown bigint not null default 0 check (shown >= 0);

-- Rows written before: the triggers are replaced after the back-fill, so the back-fill's
-- updates move the levels by nothing (each adds what it subtracts).
update child_order c
   set shown = case when c.iceberg and c.quantity > i.min_quantity then i.min_quantity else c.quantity end
  from instrument i
 where i.instrument_id = c.instrument_id and c.rests;

create or replace function child_order_written() returns trigger language plpgsql as $$
begin
    if new.working_quantity <> old.working_quantity or new.matched_quantity <> old.matched_quantity then
        update parent_order
           set working_quantity = working_quantity + new.working_quantity - old.working_quantity,
               matched_quantity = matched_quantity + new.matched_quantity - old.matched_quantity
         where parent_order_id = new.parent_order_id;
    end if;
    if old.shown <> 0 then
        update book_level
           set shown = shown - old.shown
         where instrument_id = old.instrument_id and direction = old.direction and price = old.price
           and company_id = old.company_id;
        delete from book_level
         where instrument_id = old.instrument_id and direction = old.direction and price = old.price
           and company_id = old.company_id and shown = 0;
    end if;
    if new.shown <> 0 then
        insert into book_level (instrument_id, direction, price, company_id, shown)
        values (new.instrument_id, new.direction, new.price, new.company_id, new.shown)
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    end if;
    return null;
end;
$$;

create or replace function child_orders_inserted() returns trigger language plpgsql as $$
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
    select instrument_id, direction, price, company_id, sum(shown)
      from inserted
     where shown <> 0
     group by instrument_id, direction, price, company_id
     order by instrument_id, direction, price, company_id
    on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    return null;
end;
$$;

drop function shown_quantity(boolean, bigint, bigint);
