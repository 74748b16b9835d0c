-- The index of a side's levels by price (instrument, side, price, state, age) served the
-- take's read of the levels it could reach; since ADR 0062 that read walks
-- `child_order_facing`, and nothing else reads by side and price: a read by instrument
-- alone is `child_order_instrument_state`'s. Every order written kept it up for nothing
-- (ADR 0062's own index is the one a working order now adds).
drop index child_order_level;
