-- Dated, versioned instrument settings (issue 30, ADR 0051). Every version of an
-- instrument's tick size, exchange tick size and minimum block, from when it took effect
-- (applied_at) or is to (effective_from, while applied_at is null: scheduled ahead).
-- A trade keeps the tick size and minimum block in force when it was made.
create table instrument_setting (
    setting_id uuid primary key,
    instrument_id uuid not null references instrument (instrument_id),
    effective_from timestamptz not null,
    tick_size numeric not null check (tick_size > 0),
    exchange_tick_size numeric check (exchange_tick_size > 0),
    min_quantity bigint not null check (min_quantity > 0),
    created_by uuid references app_user (user_id),
    created_at timestamptz not null,
    applied_at timestamptz
);
create index instrument_setting_of on instrument_setting (instrument_id, effective_from);
-- Each instrument's settings as they stand, in force since it was made.
insert into instrument_setting (setting_id, instrument_id, effective_from, tick_size, exchange_tick_size,
                                min_quantity, created_by, created_at, applied_at)
select instrument_id, instrument_id, created_at, tick_size, exchange_tick_size, min_quantity, null, created_at,
       created_at
from instrument where tick_size > 0 and min_quantity > 0;
alter table match_request add column tick_size numeric;
alter table match_request add column min_quantity bigint;
update match_request m set tick_size = i.tick_size, min_quantity = i.min_quantity
from instrument i where i.instrument_id = m.instrument_id;
