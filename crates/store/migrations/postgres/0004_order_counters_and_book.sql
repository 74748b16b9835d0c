-- The parent's working and matched quantities as counters kept in each child-order
-- write's transaction, and the anonymous book as levels kept the same way, so that
-- no call on the order path scans the resting orders. The database itself refuses a
-- negative tradable quantity. The back-fill below is the only place that names the
-- working and matched states in SQL: it runs once, over data written before counters.
alter table parent_order
    add column working_quantity bigint not null default 0,
    add column matched_quantity bigint not null default 0;

update parent_order p set
    working_quantity = coalesce((select sum(c.quantity) from child_order c
        where c.parent_order_id = p.parent_order_id
          and c.state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE')), 0),
    matched_quantity = coalesce((select sum(c.quantity) from child_order c
        where c.parent_order_id = p.parent_order_id
          and c.state in ('MATCHED', 'BROKER_ACCEPTED', 'BROKER_FILLED', 'PARTIAL_BROKER_ACCEPTED',
                          'PARTIAL_BROKER_FILLED')), 0);

alter table parent_order
    add constraint parent_order_working_quantity check (working_quantity >= 0),
    add constraint parent_order_matched_quantity check (matched_quantity >= 0),
    add constraint parent_order_tradable check (quantity - working_quantity - matched_quantity >= 0);

-- One row per (instrument, side, price, company) with resting quantity; `shown` counts
-- an iceberg as at most the instrument's minimum block.
create table book_level (
    instrument_id uuid not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    price numeric not null,
    company_id uuid not null references company (company_id),
    shown bigint not null check (shown >= 0),
    primary key (instrument_id, direction, price, company_id)
);

insert into book_level (instrument_id, direction, price, company_id, shown)
select c.instrument_id, c.direction, c.price, c.company_id,
       sum(case when c.iceberg and c.quantity > i.min_quantity then i.min_quantity else c.quantity end)
from child_order c join instrument i on i.instrument_id = c.instrument_id
where c.state = 'WORKING'
group by c.instrument_id, c.direction, c.price, c.company_id;
