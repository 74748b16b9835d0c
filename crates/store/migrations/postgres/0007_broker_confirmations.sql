-- The price the taker asked for: what a residual works at once a request ends unmatched.
alter table match_request add column take_price numeric;

-- One link per side of a match and per step (ACCEPT, then FILL), e-mailed to the
-- side's broker (DESIGN §4, §7): the token stored hashed, bound to one order and one
-- step, expiring; answered once.
create table broker_confirmation (
    token_hash text primary key,
    order_id uuid not null references child_order (order_id),
    match_request_id uuid not null references match_request (match_request_id),
    broker_id uuid not null references company (company_id),
    step text not null check (step in ('ACCEPT', 'FILL')),
    created_at timestamptz not null,
    expires_at timestamptz not null,
    answered_at timestamptz,
    answer boolean,
    check ((answered_at is null) = (answer is null)),
    unique (order_id, step)
);
create index broker_confirmation_match on broker_confirmation (match_request_id, step);
