alter table company add column ems_identifier text;
alter table company add column account text;
alter table company add column trade_confirmation_email text;
alter table company add column trade_confirmation_via_email_enabled integer not null default 0
    check (trade_confirmation_via_email_enabled in (0, 1));
alter table company add column default_broker_id blob references company (company_id);

-- The brokers a company may use, in the order chosen.
create table company_broker (
    company_id blob not null references company (company_id) on delete cascade,
    broker_id blob not null references company (company_id),
    position integer not null,
    primary key (company_id, broker_id)
);

-- Prices are exact decimals kept as text.
create table instrument (
    instrument_id blob primary key,
    name text not null,
    term text not null,
    description text not null default '',
    min_quantity integer not null check (min_quantity > 0),
    tick_size text not null,
    exchange_tick_size text,
    exchange_id text not null,
    exchange text not null default '',
    exchange_iso_code text not null default '',
    exchange_instrument_id text,
    bbg_code text,
    country text not null default '',
    currency text not null,
    min_tick_price text not null,
    max_tick_price text not null,
    active integer not null check (active in (0, 1)),
    is_sandbox integer not null check (is_sandbox in (0, 1)),
    reversed_spread integer not null check (reversed_spread in (0, 1)),
    created_at integer not null,
    updated_at integer not null
);
create index instrument_name on instrument (name);
