/**
 * The confirmation every action goes through: a modal <dialog> (focus moves into it, Escape
 * closes it, the page behind is inert) whose text names what will happen, and whose confirm
 * button is the only way to send the action.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export interface ConfirmDialogProps {
  title: string;
  /** What will happen, in words: shown above any fields. */
  consequence: string;
  confirmLabel: string;
  /** False while the fields are not valid: the confirm button is disabled. */
  canConfirm?: boolean;
  danger?: boolean;
  busy?: boolean;
  error?: string | undefined;
  onConfirm: () => void;
  onClose: () => void;
  children?: ComponentChildren;
}

export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      aria-describedby="confirm-consequence"
      onClose={props.onClose}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (props.canConfirm !== false && !props.busy) props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        <p id="confirm-consequence">{props.consequence}</p>
        {props.children}
        {props.error && (
          <p role="alert" class="error">
            {props.error}
          </p>
        )}
        <div class="dialog-buttons">
          <button type="button" onClick={props.onClose}>
            Back
          </button>
          <button
            type="submit"
            class={props.danger ? 'danger' : 'primary'}
            disabled={props.canConfirm === false || props.busy}
          >
            {props.busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
