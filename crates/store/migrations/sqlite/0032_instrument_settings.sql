-- Dated, versioned instrument settings (issue 30, ADR 0051): see PostgreSQL's 0035.
create table instrument_setting (
    setting_id blob primary key,
    instrument_id blob not null references instrument (instrument_id),
    effective_from integer not null,
    tick_size text not null,
    exchange_tick_size text,
    min_quantity integer not null check (min_quantity > 0),
    created_by blob references app_user (user_id),
    created_at integer not null,
    applied_at integer
);
create index instrument_setting_of on instrument_setting (instrument_id, effective_from);
insert into instrument_setting (setting_id, instrument_id, effective_from, tick_size, exchange_tick_size,
                                min_quantity, created_by, created_at, applied_at)
select instrument_id, instrument_id, created_at, tick_size, exchange_tick_size, min_quantity, null, created_at,
       created_at
from instrument where min_quantity > 0;
alter table match_request add column tick_size text;
alter table match_request add column min_quantity integer;
update match_request set
    tick_size = (select i.tick_size from instrument i where i.instrument_id = match_request.instrument_id),
    min_quantity = (select i.min_quantity from instrument i where i.instrument_id = match_request.instrument_id);
