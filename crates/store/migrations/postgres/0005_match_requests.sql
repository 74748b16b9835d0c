-- A taker's request to match one resting order: the taker's child order and the locked
-- (split off) part of the resting order, both AWAITING_MATCH while it is pending.
create table match_request (
    match_request_id uuid primary key,
    instrument_id uuid not null references instrument (instrument_id),
    -- The taker's side.
    direction text not null check (direction in ('BUY', 'SELL')),
    price numeric not null,
    quantity bigint not null check (quantity > 0),
    requesting_order_id uuid not null references child_order (order_id),
    requesting_company_id uuid not null references company (company_id),
    requesting_user_id uuid not null references app_user (user_id),
    responding_order_id uuid not null references child_order (order_id),
    responding_company_id uuid not null references company (company_id),
    -- Whether the resting order is an iceberg (the responder's view shows it).
    iceberg boolean not null,
    responding_user_id uuid not null references app_user (user_id),
    state text not null check (state in ('PENDING', 'ACCEPTED', 'PARTIAL_BROKER_ACCEPTED', 'BROKER_ACCEPTED',
        'PARTIAL_BROKER_FILLED', 'CANCELLED', 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK', 'REJECTED', 'TIMED_OUT',
        'BROKER_FILLED', 'BREAKDOWN')),
    created_at timestamptz not null,
    expires_at timestamptz not null,
    updated_at timestamptz not null,
    check (requesting_company_id <> responding_company_id)
);
create index match_request_requesting_order on match_request (requesting_order_id);
create index match_request_responding_order on match_request (responding_order_id);
create index match_request_responder on match_request (responding_user_id, state);
create index match_request_requester on match_request (requesting_user_id, state);

-- The resting orders at one price, oldest first, without scanning the instrument's others.
create index child_order_level on child_order (instrument_id, direction, price, state, created_at);
