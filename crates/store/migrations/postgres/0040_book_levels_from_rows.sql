-- Every book level is the sum of what its resting rows show (ADR 0056); the rows are the
-- truth. Levels kept by the triggers of earlier versions are rebuilt from the rows once,
-- so that a level that drifted from them before shows what they do.
delete from book_level;
insert into book_level (instrument_id, direction, price, company_id, shown)
select instrument_id, direction, price, company_id, sum(shown)
  from child_order
 where shown > 0
 group by instrument_id, direction, price, company_id;
