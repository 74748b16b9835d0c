-- The book's shown quantity computed inline in the order trigger (ADR 0019): a call of
-- the SQL function `book_shown` runs its own executor per row, which a profile of the
-- order path showed as a visible share of PostgreSQL's time per order.
create or replace function child_order_written() returns trigger language plpgsql as $$
declare
    min_block bigint;
begin
    if tg_op = 'UPDATE' then
        if new.working_quantity <> old.working_quantity or new.matched_quantity <> old.matched_quantity then
            update parent_order
               set working_quantity = working_quantity + new.working_quantity - old.working_quantity,
                   matched_quantity = matched_quantity + new.matched_quantity - old.matched_quantity
             where parent_order_id = new.parent_order_id;
        end if;
        if old.rests then
            select min_quantity into min_block from instrument where instrument_id = old.instrument_id;
            update book_level
               set shown = shown - (case when old.iceberg and old.quantity > min_block then min_block else old.quantity end)
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
        if min_block is null or new.instrument_id <> old.instrument_id then
            select min_quantity into min_block from instrument where instrument_id = new.instrument_id;
        end if;
        insert into book_level (instrument_id, direction, price, company_id, shown)
        values (new.instrument_id, new.direction, new.price, new.company_id,
                case when new.iceberg and new.quantity > min_block then min_block else new.quantity end)
        on conflict (instrument_id, direction, price, company_id) do update set shown = book_level.shown + excluded.shown;
    end if;
    return null;
end;
$$;

drop function book_shown(uuid, boolean, bigint);
