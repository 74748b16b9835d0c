-- Requests for quote (DESIGN §4, ADR 0020): the requester's RFQ, its quantity reserved
-- from the parent by one child order (AWAITING_RFQ_ACCEPTANCE), and one response per
-- addressed liquidity provider.
create table rfq (
    rfq_id blob primary key,
    parent_order_id blob not null references parent_order (parent_order_id),
    order_id blob not null references child_order (order_id),
    instrument_id blob not null references instrument (instrument_id),
    -- The requester's side.
    direction text not null check (direction in ('BUY', 'SELL')),
    company_id blob not null references company (company_id),
    user_id blob not null references app_user (user_id),
    quantity integer not null check (quantity > 0),
    two_way integer not null check (two_way in (0, 1)),
    anonymous integer not null check (anonymous in (0, 1)),
    state text not null check (state in ('OPEN', 'COMPLETED', 'EXPIRED', 'CANCELLED')),
    created_at integer not null,
    expires_at integer not null,
    updated_at integer not null
);
create index rfq_company on rfq (company_id, state, created_at);

-- A trade from an accepted quote is a match like any other; it names its RFQ, so that
-- it does not count in the provider's reliability score.
alter table match_request add column rfq_id blob references rfq (rfq_id);

create table rfq_response (
    rfq_response_id blob primary key,
    rfq_id blob not null references rfq (rfq_id),
    -- The addressed liquidity provider.
    company_id blob not null references company (company_id),
    state text not null check (state in ('AWAITING_RESPONSE', 'RESPONDED', 'ACCEPTED', 'REJECTED_BY_REQUESTER',
        'REJECTED_BY_RESPONDER', 'EXPIRED', 'CANCELLED')),
    -- Who quoted last, for which broker of theirs.
    user_id blob references app_user (user_id),
    broker_id blob references company (company_id),
    buy_price text,
    buy_quantity integer check (buy_quantity > 0),
    sell_price text,
    sell_quantity integer check (sell_quantity > 0),
    match_request_id blob references match_request (match_request_id),
    created_at integer not null,
    updated_at integer not null,
    unique (rfq_id, company_id),
    check ((buy_price is null) = (buy_quantity is null) and (sell_price is null) = (sell_quantity is null))
);
create index rfq_response_company on rfq_response (company_id, state);

-- Notifications tell of a match request or of an RFQ: SQLite changes a column's
-- constraints only by rebuilding the table.
create table notification_new (
    notification_id blob primary key,
    user_id blob not null references app_user (user_id),
    type text not null check (type in ('MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED',
        'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE',
        'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED')),
    -- The state of what it tells of when it last changed, in match-request terms.
    status text not null,
    instrument_id blob not null references instrument (instrument_id),
    match_request_id blob references match_request (match_request_id),
    -- The recipient's role (REQUESTER or RESPONDER).
    role text not null check (role in ('REQUESTER', 'RESPONDER')),
    read integer not null check (read in (0, 1)),
    archived integer not null check (archived in (0, 1)),
    created_at integer not null,
    expired_at integer not null,
    updated_at integer not null,
    rfq_id blob references rfq (rfq_id),
    check ((match_request_id is null) <> (rfq_id is null))
);
insert into notification_new (notification_id, user_id, type, status, instrument_id, match_request_id, role, read,
    archived, created_at, expired_at, updated_at)
select notification_id, user_id, type, status, instrument_id, match_request_id, role, read, archived, created_at,
    expired_at, updated_at
from notification;
drop table notification;
alter table notification_new rename to notification;
create index notification_user on notification (user_id, archived, created_at);
create index notification_match_request on notification (match_request_id);
create index notification_rfq on notification (rfq_id);
