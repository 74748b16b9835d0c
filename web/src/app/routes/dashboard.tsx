import { EmptyDashboard } from '@/features/dashboard/components/empty-dashboard';

export default function DashboardRoute() {
  return <EmptyDashboard />;
}
