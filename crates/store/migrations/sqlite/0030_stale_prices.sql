-- The stale-price guard (issue 30, ADR 0048): see PostgreSQL's 0033. SQLite adds a NOT
-- NULL column only with a default; every row is set at once from updated_at.
alter table instrument add column band_seen_at integer not null default 0;
update instrument set band_seen_at = updated_at;
alter table instrument add column prices_stale_after integer
    check (prices_stale_after between 1 and 86400);
alter table instrument add column prices_stale integer not null default 0 check (prices_stale in (0, 1));
