import { useForm } from 'react-hook-form';
import { zodResolver } from '@hookform/resolvers/zod';
import { FormDrawer, serverFieldError } from '@/components/form/form-drawer';
import { FormTextField } from '@/components/form/form-fields';
import { useToast } from '@/components/ui/toast';
import { useCreateNewsletter } from '../api/create-newsletter';
import type { Newsletter } from '../api/get-newsletters';
import { emptyNewsletterForm, newsletterBody, newsletterFormSchema, type NewsletterForm } from '../lib/newsletter-form';

type Props = {
  onClose: () => void;
  /** Opens the new newsletter's recipients (the toast's action). */
  onRecipients: (n: Newsletter) => void;
};

/** Admin spec sections 2 and 5: the create form (name, description); submit stays disabled while invalid. */
export function CreateNewsletterDrawer({ onClose, onRecipients }: Props) {
  const form = useForm<NewsletterForm>({ resolver: zodResolver(newsletterFormSchema), mode: 'all', defaultValues: emptyNewsletterForm });
  const create = useCreateNewsletter();
  const { showToast } = useToast();
  const serverError = (k: keyof NewsletterForm) => serverFieldError(create.error, k);

  const submit = (v: NewsletterForm) =>
    create.mutate(newsletterBody(v), {
      onSuccess: (n) => {
        showToast({ message: `${n.name} created.`, description: 'Add its recipients next.', action: { label: 'Add recipients', onClick: () => onRecipients(n) } });
        onClose();
      },
    });

  return (
    <FormDrawer form={form} title="Create newsletter" submitLabel="Create newsletter" pending={create.isPending} error={create.error} onSubmit={submit} onClose={onClose}>
      <FormTextField control={form.control} name="name" label="Name" serverError={serverError('name')} required autoFocus />
      <FormTextField control={form.control} name="description" label="Description" serverError={serverError('description')} required multiline minRows={3} />
    </FormDrawer>
  );
}
