-- The market-data session as the node holding it last said: see PostgreSQL's 0036.
create table market_data_session (
    id integer primary key check (id = 1),
    node_id text not null,
    provider text not null,
    sender_comp_id text not null,
    target_comp_id text not null,
    logged_on integer not null check (logged_on in (0, 1)),
    since integer not null,
    last_price_at integer,
    symbols integer not null,
    updated_at integer not null
);
