import { TradeConfirmationPage } from '@/features/trade-confirmation/components/trade-confirmation-page';

/** A broker accepts (or declines) a trade from its e-mail link. */
export default function AcceptOrderRoute() {
  return <TradeConfirmationPage step="ACCEPT" />;
}
