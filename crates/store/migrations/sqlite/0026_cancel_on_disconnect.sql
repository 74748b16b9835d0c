-- Cancel on disconnect (issue 29, ADR 0043). A node holds a lease row for each user with
-- a realtime session on it, and for each company whose FIX session it holds, renewed
-- while the session lives; one whose rows have all lapsed (closed, or the node died) is
-- gone. A trader chooses whether their working orders are then pulled; each pulled order
-- tells its owner, on the order. A company's FIX session does the same for the parent
-- orders it sent, unless the company turns it off.
-- SQLite changes a column's constraints only by rebuilding the table.
create table presence (
    -- A user's realtime sessions (USER, the user's id), or a company's FIX session (FIX,
    -- the company's id).
    holder_kind text not null check (holder_kind in ('USER', 'FIX')),
    holder_id blob not null,
    node_id text not null,
    until integer not null,
    primary key (holder_kind, holder_id, node_id)
);
create index presence_until on presence (until);
alter table app_user add column cancel_on_disconnect integer not null default 0
    check (cancel_on_disconnect in (0, 1));
alter table company add column fix_cancel_on_disconnect integer not null default 1
    check (fix_cancel_on_disconnect in (0, 1));
create table notification_new (
    notification_id blob primary key,
    user_id blob not null references app_user (user_id),
    type text not null check (type in ('MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED',
        'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE',
        'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED', 'MATCH_REQUEST_BROKER_REJECTED',
        'ORDER_PRICE_CORRECTED', 'ORDER_CANCELLED_ON_DISCONNECT')),
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
    order_id blob references child_order (order_id),
    old_price text,
    new_price text,
    direction text check (direction in ('BUY', 'SELL')),
    quantity integer check (quantity > 0),
    price text,
    check ((match_request_id is not null) + (rfq_id is not null) + (order_id is not null) = 1),
    check ((direction is null) = (quantity is null) and (direction is null) = (price is null)),
    -- A notice on an order carries prices only when it is a correction.
    check ((old_price is null) = (new_price is null) and (old_price is null or order_id is not null)
        and (type = 'ORDER_PRICE_CORRECTED') = (old_price is not null))
);
insert into notification_new (notification_id, user_id, type, status, instrument_id, match_request_id, role, read,
    archived, created_at, expired_at, updated_at, rfq_id, order_id, old_price, new_price, direction, quantity, price)
select notification_id, user_id, type, status, instrument_id, match_request_id, role, read, archived, created_at,
    expired_at, updated_at, rfq_id, order_id, old_price, new_price, direction, quantity, price
from notification;
drop table notification;
alter table notification_new rename to notification;
create index notification_user on notification (user_id, archived, created_at);
create index notification_match_request on notification (match_request_id);
create index notification_rfq on notification (rfq_id);
