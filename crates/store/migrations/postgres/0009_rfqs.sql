-- Requests for quote (DESIGN §4, ADR 0020): the requester's RFQ, its quantity reserved
-- from the parent by one child order (AWAITING_RFQ_ACCEPTANCE), and one response per
-- addressed liquidity provider.
create table rfq (
    rfq_id uuid primary key,
    parent_order_id uuid not null references parent_order (parent_order_id),
    order_id uuid not null references child_order (order_id),
    instrument_id uuid not null references instrument (instrument_id),
    -- The requester's side.
    direction text not null check (direction in ('BUY', 'SELL')),
    company_id uuid not null references company (company_id),
    user_id uuid not null references app_user (user_id),
    quantity bigint not null check (quantity > 0),
    two_way boolean not null,
    anonymous boolean not null,
    state text not null check (state in ('OPEN', 'COMPLETED', 'EXPIRED', 'CANCELLED')),
    created_at timestamptz not null,
    expires_at timestamptz not null,
    updated_at timestamptz not null
);
create index rfq_company on rfq (company_id, state, created_at);

-- A trade from an accepted quote is a match like any other; it names its RFQ, so that
-- it does not count in the provider's reliability score.
alter table match_request add column rfq_id uuid references rfq (rfq_id);

create table rfq_response (
    rfq_response_id uuid primary key,
    rfq_id uuid not null references rfq (rfq_id),
    -- The addressed liquidity provider.
    company_id uuid not null references company (company_id),
    state text not null check (state in ('AWAITING_RESPONSE', 'RESPONDED', 'ACCEPTED', 'REJECTED_BY_REQUESTER',
        'REJECTED_BY_RESPONDER', 'EXPIRED', 'CANCELLED')),
    -- Who quoted last, for which broker of theirs.
    user_id uuid references app_user (user_id),
    broker_id uuid references company (company_id),
    buy_price numeric,
    buy_quantity bigint check (buy_quantity > 0),
    sell_price numeric,
    sell_quantity bigint check (sell_quantity > 0),
    match_request_id uuid references match_request (match_request_id),
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (rfq_id, company_id),
    check ((buy_price is null) = (buy_quantity is null) and (sell_price is null) = (sell_quantity is null))
);
create index rfq_response_company on rfq_response (company_id, state);

-- Notifications tell of a match request or of an RFQ.
alter table notification alter column match_request_id drop not null;
alter table notification add column rfq_id uuid references rfq (rfq_id);
alter table notification drop constraint notification_type_check;
alter table notification add constraint notification_type_check check (type in ('MATCH_REQUEST_ACCEPTED',
    'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED', 'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT',
    'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', 'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED'));
alter table notification add constraint notification_subject check ((match_request_id is null) <> (rfq_id is null));
create index notification_rfq on notification (rfq_id);
