-- A venue-wide job that one node at a time may run (issue 30: the market-data session):
-- the node holding its lease until `until`, renewed while it runs; a lapsed lease is free.
create table lease (
    name text primary key,
    node_id text not null,
    until timestamptz not null
);
