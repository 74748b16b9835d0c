-- A trader's allocations, as their screens list them beside their trades (ADR 0045):
-- only the order's own trader writes one, so `updated_by` is that trader.
create index allocation_by_trader on allocation (updated_by, updated_at);
