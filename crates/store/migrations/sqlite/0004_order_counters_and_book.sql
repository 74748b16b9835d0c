-- The parent's working and matched quantities as counters kept in each child-order
-- write's transaction, and the anonymous book as levels kept the same way, so that
-- no call on the order path scans the resting orders. The database itself refuses a
-- negative tradable quantity. The back-fill below is the only place that names the
-- working and matched states in SQL: it runs once, over data written before counters.
alter table parent_order add column working_quantity integer not null default 0
    check (working_quantity >= 0);
alter table parent_order add column matched_quantity integer not null default 0
    check (matched_quantity >= 0 and quantity - working_quantity - matched_quantity >= 0);

update parent_order set
    working_quantity = coalesce((select sum(c.quantity) from child_order c
        where c.parent_order_id = parent_order.parent_order_id
          and c.state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE')), 0),
    matched_quantity = coalesce((select sum(c.quantity) from child_order c
        where c.parent_order_id = parent_order.parent_order_id
          and c.state in ('MATCHED', 'BROKER_ACCEPTED', 'BROKER_FILLED', 'PARTIAL_BROKER_ACCEPTED',
                          'PARTIAL_BROKER_FILLED')), 0);

-- One row per (instrument, side, price, company) with resting quantity; `shown` counts
-- an iceberg as at most the instrument's minimum block.
create table book_level (
    instrument_id blob not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    price text not null,
    company_id blob not null references company (company_id),
    shown integer not null check (shown >= 0),
    primary key (instrument_id, direction, price, company_id)
);

insert into book_level (instrument_id, direction, price, company_id, shown)
select c.instrument_id, c.direction, c.price, c.company_id,
       sum(case when c.iceberg = 1 and c.quantity > i.min_quantity then i.min_quantity else c.quantity end)
from child_order c join instrument i on i.instrument_id = c.instrument_id
where c.state = 'WORKING'
group by c.instrument_id, c.direction, c.price, c.company_id;
