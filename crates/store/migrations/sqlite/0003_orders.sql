create table parent_order (
    parent_order_id blob primary key,
    company_id blob not null references company (company_id),
    created_by blob not null references app_user (user_id),
    instrument_id blob not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    quantity integer not null check (quantity > 0),
    broker_instructions text,
    state text not null check (state in ('ACTIVE', 'FILLED', 'CANCELLED')),
    created_at integer not null,
    updated_at integer not null
);
create index parent_order_company on parent_order (company_id, state);

create table child_order (
    order_id blob primary key,
    parent_order_id blob not null references parent_order (parent_order_id),
    company_id blob not null references company (company_id),
    created_by blob not null references app_user (user_id),
    instrument_id blob not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    state text not null check (state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE', 'MATCHED',
        'BROKER_ACCEPTED', 'BROKER_FILLED', 'BROKER_REJECTED', 'ERROR', 'CANCELLED', 'REJECTED', 'EXPIRED',
        'PARTIAL_BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED')),
    price text not null,
    quantity integer not null check (quantity > 0),
    iceberg integer not null check (iceberg in (0, 1)),
    residual integer not null check (residual in (0, 1)),
    broker_id blob not null references company (company_id),
    created_at integer not null,
    updated_at integer not null
);
create index child_order_parent on child_order (parent_order_id);
create index child_order_instrument_state on child_order (instrument_id, state);
create index child_order_company on child_order (company_id, created_at);
