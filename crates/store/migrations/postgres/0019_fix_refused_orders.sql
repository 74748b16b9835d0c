-- NewOrderSingles the venue refused, by ClOrdID (ADR 0025): the same ClOrdID again, resent
-- after a crash or not, gets the same refusal instead of a second chance.
create table fix_refused_order (
    company_id uuid not null references company (company_id),
    cl_ord_id text not null,
    reason text not null,
    created_at timestamptz not null,
    primary key (company_id, cl_ord_id)
);
