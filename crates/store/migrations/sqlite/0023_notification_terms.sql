-- Issue 28, point 10: a match request's notification carries its terms as its recipient
-- sees them (their own side, the quantity and the price), so that the history says what
-- ended, not only that something did. A match request's terms never change after it is
-- made; the rows written before are filled from their match requests.
alter table notification add column direction text check (direction in ('BUY', 'SELL'));
alter table notification add column quantity integer check (quantity > 0);
alter table notification add column price text;
update notification
set direction = (select case when notification.role = 'REQUESTER' then m.direction when m.direction = 'BUY' then 'SELL'
        else 'BUY' end from match_request m where m.match_request_id = notification.match_request_id),
    quantity = (select m.quantity from match_request m where m.match_request_id = notification.match_request_id),
    price = (select m.price from match_request m where m.match_request_id = notification.match_request_id)
where match_request_id is not null;
