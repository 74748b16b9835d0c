-- A company admin's own newsletters (admin spec section 6: the Orders newsletter is for
-- everyone with the drawer; ADR 0021): the company whose admins keep it, or null for the
-- venue's own, which only venue staff see.
alter table newsletter add column company_id uuid references company (company_id);
create index newsletter_company on newsletter (company_id);
