-- Exchange calendars: see PostgreSQL's 0037.
create table exchange (
    mic text primary key check (length(mic) = 4 and mic = upper(mic)),
    name text not null,
    time_zone text not null,
    open_time text not null,
    close_time text not null,
    parent_orders_from text not null,
    days text not null,
    holidays text not null default '',
    created_at integer not null,
    updated_at integer not null
);
