import { TradeConfirmationPage } from '@/features/trade-confirmation/components/trade-confirmation-page';

/** A broker confirms (or reports not) the fill of a trade from its e-mail link. */
export default function FillOrderRoute() {
  return <TradeConfirmationPage step="FILL" />;
}
