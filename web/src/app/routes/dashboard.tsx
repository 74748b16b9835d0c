import { TradingDashboard } from '@/features/orders/components/trading-dashboard';

export default function DashboardRoute() {
  return <TradingDashboard />;
}
