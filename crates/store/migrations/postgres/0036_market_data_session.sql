-- The market-data session as the node holding it last said (issue 30, ADR 0049), for the
-- FIX sessions screen: one row, written by the holder when it logs on, at each refresh
-- and when the session ends. It is logged on only while its holder's lease lives.
create table market_data_session (
    id integer primary key check (id = 1),
    node_id text not null,
    provider text not null,
    sender_comp_id text not null,
    target_comp_id text not null,
    logged_on boolean not null,
    since timestamptz not null,
    last_price_at timestamptz,
    symbols integer not null,
    updated_at timestamptz not null
);
