-- The working orders of a side in the order a take reaches them (ADR 0062): best price
-- first for the taker (a sell's price, a buy's negated), then oldest first. A take reads
-- the best few and stops, however deep the side. Spelled as `FACING_KEY` in `sqlite.rs`,
-- which the planner matches.
create index child_order_facing on child_order
    (instrument_id, direction, (case direction when 'BUY' then -cast(price as real) else cast(price as real) end),
     created_at, order_id)
    where state = 'WORKING';
