-- The rest of the admin area (issue 12): the kill switch, the Orders panel's paging
-- and the orders newsletter.

-- Set while a company's trading is stopped (the kill switch, ADR 0021); null otherwise.
alter table company add column trading_stopped_at timestamptz;

-- The Orders panel pages every child order newest first.
create index child_order_created on child_order (created_at, order_id);

create table newsletter (
    newsletter_id uuid primary key,
    name text not null,
    description text not null,
    -- What the digest covers: {"instrument_ids": [...]} or null for every active instrument.
    filter_criteria jsonb,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    last_sent_at timestamptz
);

create table newsletter_recipient (
    newsletter_id uuid not null references newsletter (newsletter_id) on delete cascade,
    user_id uuid not null references app_user (user_id),
    added_at timestamptz not null,
    primary key (newsletter_id, user_id)
);

-- A new child order of a stopped company is refused (ADR 0021). The check runs after
-- the parent's row is updated: an insert that updated it before the kill switch locked
-- the company's parents is seen by the switch's sweep; one that waited for the switch's
-- lock reads the committed stop here (plpgsql takes a new snapshot per statement).
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
    else
        if new.working_quantity <> 0 or new.matched_quantity <> 0 then
            update parent_order
               set working_quantity = working_quantity + new.working_quantity,
                   matched_quantity = matched_quantity + new.matched_quantity
             where parent_order_id = new.parent_order_id;
        end if;
        if new.working_quantity <> 0
           and exists (select 1 from company where company_id = new.company_id and trading_stopped_at is not null) then
            raise exception 'trading is stopped for company %', new.company_id
                using errcode = 'check_violation', constraint = 'company_trading_stopped';
        end if;
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
