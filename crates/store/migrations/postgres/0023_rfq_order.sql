-- The Orders panel says which child orders an RFQ reserved (their price is set only when
-- a quote is accepted): one indexed lookup per listed order.
create index rfq_order on rfq (order_id);
