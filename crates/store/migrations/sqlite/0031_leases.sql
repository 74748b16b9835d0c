-- A venue-wide job that one node at a time may run: see PostgreSQL's 0034.
create table lease (
    name text primary key,
    node_id text not null,
    until integer not null
);
