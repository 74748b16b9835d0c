-- The stale-price guard (issue 30, ADR 0048). Each price received for an instrument (a
-- band from the feed or the operator) sets band_seen_at; an instrument with a staleness
-- limit that has gone longer than it without a price is stale: takes, accepts and quote
-- accepts on it are refused until a price comes. prices_stale is the venue's sweep saying
-- so (for screens, the metric and the action log); the trading checks also read the time.
alter table instrument add column band_seen_at timestamptz;
update instrument set band_seen_at = updated_at;
alter table instrument alter column band_seen_at set not null;
alter table instrument add column prices_stale_after integer
    check (prices_stale_after between 1 and 86400);
alter table instrument add column prices_stale boolean not null default false;
