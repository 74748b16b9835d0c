-- Issue 28, point 10: a match request's notification carries its terms as its recipient
-- sees them (their own side, the quantity and the price), so that the history says what
-- ended, not only that something did. A match request's terms never change after it is
-- made; the rows written before are filled from their match requests.
alter table notification add column direction text check (direction in ('BUY', 'SELL'));
alter table notification add column quantity bigint check (quantity > 0);
alter table notification add column price numeric;
update notification n
set direction = case when n.role = 'REQUESTER' then m.direction when m.direction = 'BUY' then 'SELL' else 'BUY' end,
    quantity = m.quantity,
    price = m.price
from match_request m
where m.match_request_id = n.match_request_id;
alter table notification add constraint notification_terms
    check ((direction is null) = (quantity is null) and (direction is null) = (price is null));
