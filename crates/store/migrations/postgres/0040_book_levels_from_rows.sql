-- Every book level is the sum of what its resting rows show (ADR 0056); the rows are the
-- truth. Levels kept by the triggers of earlier versions are rebuilt from the rows once,
-- so that a level that drifted from them before shows what they do.
-- First each resting iceberg is shown again by its instrument's block now: one written
-- with a block that was changing (before ADR 0057) kept the old one. This one-time repair
-- spells the display rule out, as 0039's back-fill did; the engine's is the rule.
update child_order c
   set shown = least(c.quantity, i.min_quantity)
  from instrument i
 where i.instrument_id = c.instrument_id and c.rests and c.iceberg
   and c.shown <> least(c.quantity, i.min_quantity);
delete from book_level;
insert into book_level (instrument_id, direction, price, company_id, shown)
select instrument_id, direction, price, company_id, sum(shown)
  from child_order
 where shown > 0
 group by instrument_id, direction, price, company_id;
