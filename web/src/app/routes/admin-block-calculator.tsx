import { BlockCalculator } from '@/features/block-calculator/components/block-calculator';
import { hasAdminDrawer } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminBlockCalculatorRoute() {
  return (
    <Guard allow={hasAdminDrawer}>
      <BlockCalculator />
    </Guard>
  );
}
