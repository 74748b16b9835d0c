-- Issue 28, points 7 and 8: both traders are told when a broker declines their trade (on
-- its match request), and a trader when an operator corrects the limit price of their
-- order (on the order, with the price before and after). SQLite changes a column's
-- constraints only by rebuilding the table.
create table notification_new (
    notification_id blob primary key,
    user_id blob not null references app_user (user_id),
    type text not null check (type in ('MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED',
        'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE',
        'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED', 'MATCH_REQUEST_BROKER_REJECTED',
        'ORDER_PRICE_CORRECTED')),
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
    check ((match_request_id is not null) + (rfq_id is not null) + (order_id is not null) = 1),
    check ((order_id is null) = (old_price is null) and (order_id is null) = (new_price is null))
);
insert into notification_new (notification_id, user_id, type, status, instrument_id, match_request_id, role, read,
    archived, created_at, expired_at, updated_at, rfq_id)
select notification_id, user_id, type, status, instrument_id, match_request_id, role, read, archived, created_at,
    expired_at, updated_at, rfq_id
from notification;
drop table notification;
alter table notification_new rename to notification;
create index notification_user on notification (user_id, archived, created_at);
create index notification_match_request on notification (match_request_id);
create index notification_rfq on notification (rfq_id);
