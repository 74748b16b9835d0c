create table parent_order (
    parent_order_id uuid primary key,
    company_id uuid not null references company (company_id),
    created_by uuid not null references app_user (user_id),
    instrument_id uuid not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    quantity bigint not null check (quantity > 0),
    broker_instructions text,
    state text not null check (state in ('ACTIVE', 'FILLED', 'CANCELLED')),
    created_at timestamptz not null,
    updated_at timestamptz not null
);
create index parent_order_company on parent_order (company_id, state);

create table child_order (
    order_id uuid primary key,
    parent_order_id uuid not null references parent_order (parent_order_id),
    company_id uuid not null references company (company_id),
    created_by uuid not null references app_user (user_id),
    instrument_id uuid not null references instrument (instrument_id),
    direction text not null check (direction in ('BUY', 'SELL')),
    state text not null check (state in ('WORKING', 'AWAITING_MATCH', 'AWAITING_RFQ_ACCEPTANCE', 'MATCHED',
        'BROKER_ACCEPTED', 'BROKER_FILLED', 'BROKER_REJECTED', 'ERROR', 'CANCELLED', 'REJECTED', 'EXPIRED',
        'PARTIAL_BROKER_ACCEPTED', 'PARTIAL_BROKER_FILLED')),
    price numeric not null,
    quantity bigint not null check (quantity > 0),
    iceberg boolean not null,
    residual boolean not null,
    broker_id uuid not null references company (company_id),
    created_at timestamptz not null,
    updated_at timestamptz not null
);
create index child_order_parent on child_order (parent_order_id);
create index child_order_instrument_state on child_order (instrument_id, state);
create index child_order_company on child_order (company_id, created_at);
