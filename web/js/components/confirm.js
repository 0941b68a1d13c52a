// A question before an action that costs something (a rerun starts trials on GPUs): a modal dialog
// in the page's own look, which says what will happen and names the action on its button.

import {h} from '../dom.js';

/**
 * Shows a modal dialog with `title`, `text` and the buttons Cancel and `ok`; resolves true when `ok`
 * is chosen, false on Cancel, Escape or when the person navigates away. The dialog is removed after.
 */
export function confirmDialog({title, text, ok}) {
  const dialog = h('dialog', {class: 'confirm', 'aria-labelledby': 'confirm-title', 'data-testid': 'confirm'},
    h('form', {method: 'dialog'},
      h('h2', {id: 'confirm-title'}, title),
      h('p', {'data-testid': 'confirm-text'}, text),
      h('menu', {}, h('button', {type: 'submit', value: 'cancel'}, 'Cancel'),
        h('button', {type: 'submit', value: 'ok', class: 'primary', 'data-testid': 'confirm-ok'}, ok))));
  document.body.append(dialog);
  const leave = () => dialog.close('cancel');
  window.addEventListener('hashchange', leave, {once: true});
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      window.removeEventListener('hashchange', leave);
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    }, {once: true});
    dialog.showModal();
  });
}
