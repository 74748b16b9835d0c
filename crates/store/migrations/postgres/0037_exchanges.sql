-- Exchange calendars (issue 30, ADR 0052): one row per exchange, keyed by its ISO 10383
-- MIC, which an instrument names in exchange_iso_code. An instrument whose MIC has no
-- row follows the venue's own calendar (the command line's hours and holidays).
create table exchange (
    mic text primary key check (mic ~ '^[A-Z0-9]{4}$'),
    name text not null,
    -- An IANA zone, e.g. Europe/London.
    time_zone text not null,
    -- Local wall-clock times, HH:MM.
    open_time text not null,
    close_time text not null,
    parent_orders_from text not null,
    -- Trading days, e.g. 'Mon,Tue,Wed,Thu,Fri'.
    days text not null,
    -- One holiday per line: '2026-12-25=Christmas Day' or '2026-12-28'.
    holidays text not null default '',
    created_at timestamptz not null,
    updated_at timestamptz not null
);
