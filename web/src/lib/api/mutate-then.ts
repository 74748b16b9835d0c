/** What runs after a write, whatever became of the component that asked for it. */
export interface AfterWrite<T> {
  onSuccess?: (data: T) => void;
  onError?: (error: unknown) => void;
  onSettled?: () => void;
}

/**
 * `mutation.mutate(variables, after)`, except that `after` runs even when the caller has
 * unmounted before the answer. A pushed frame may take a row, and the button that wrote
 * it, off the screen first (the order a trader cancels leaves the card when its own frame
 * arrives), and React Query drops a `mutate` call's callbacks then: the toast would never
 * show. An error the caller does not handle is still shown by the API error snackbar.
 */
export function mutateThen<T, V>(mutation: { mutateAsync: (variables: V) => Promise<T> }, variables: V, after: AfterWrite<T>) {
  void mutation
    .mutateAsync(variables)
    .then(after.onSuccess, (e: unknown) => after.onError?.(e))
    .finally(after.onSettled);
}
