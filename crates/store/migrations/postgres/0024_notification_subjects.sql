-- Issue 28, points 7 and 8: both traders are told when a broker declines their trade (on
-- its match request), and a trader when an operator corrects the limit price of their
-- order (on the order, with the price before and after).
alter table notification add column order_id uuid references child_order (order_id);
alter table notification add column old_price numeric;
alter table notification add column new_price numeric;
alter table notification drop constraint notification_type_check;
alter table notification add constraint notification_type_check check (type in ('MATCH_REQUEST_ACCEPTED',
    'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED', 'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT',
    'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', 'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED',
    'MATCH_REQUEST_BROKER_REJECTED', 'ORDER_PRICE_CORRECTED'));
alter table notification drop constraint notification_subject;
alter table notification add constraint notification_subject check (num_nonnulls(match_request_id, rfq_id, order_id) = 1);
alter table notification add constraint notification_correction
    check ((order_id is null) = (old_price is null) and (order_id is null) = (new_price is null));
