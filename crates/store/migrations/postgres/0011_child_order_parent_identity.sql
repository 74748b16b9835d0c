-- One foreign key from a child order to its parent's identity (id, company, instrument,
-- side) instead of three to the parent, the company and the instrument (ADR 0019): the
-- same guarantee and one more (a child order's company, instrument and side are its
-- parent's), with one check per insert instead of three, and no share lock taken on the
-- company's and the instrument's rows, which every order of the venue would otherwise
-- lock together.
alter table parent_order add constraint parent_order_identity unique (parent_order_id, company_id, instrument_id, direction);
alter table child_order add constraint child_order_parent_identity foreign key (parent_order_id, company_id, instrument_id, direction)
    references parent_order (parent_order_id, company_id, instrument_id, direction);
alter table child_order drop constraint child_order_parent_order_id_fkey;
alter table child_order drop constraint child_order_company_id_fkey;
alter table child_order drop constraint child_order_instrument_id_fkey;
