alter table company add column ems_identifier text;
alter table company add column account text;
alter table company add column trade_confirmation_email text;
alter table company add column trade_confirmation_via_email_enabled boolean not null default false;
alter table company add column default_broker_id uuid references company (company_id);

create table company_broker (
    company_id uuid not null references company (company_id) on delete cascade,
    broker_id uuid not null references company (company_id),
    position integer not null,
    primary key (company_id, broker_id)
);

create table instrument (
    instrument_id uuid primary key,
    name text not null,
    term text not null,
    description text not null default '',
    min_quantity bigint not null check (min_quantity > 0),
    tick_size numeric not null check (tick_size > 0),
    exchange_tick_size numeric,
    exchange_id text not null,
    exchange text not null default '',
    exchange_iso_code text not null default '',
    exchange_instrument_id text,
    bbg_code text,
    country text not null default '',
    currency text not null,
    min_tick_price numeric not null,
    max_tick_price numeric not null check (max_tick_price > min_tick_price),
    active boolean not null,
    is_sandbox boolean not null,
    reversed_spread boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
);
create index instrument_name on instrument (name);
