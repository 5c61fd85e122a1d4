// A dialog of a few dozen nodes, as a UI library would build one.
function makeDialog(n) {
  const dialog = document.createElement('div');
  dialog.className = 'dialog';
  for (let i = 0; i < 20; i++) {
    const row = document.createElement('p');
    row.textContent = `row ${i} of dialog ${n} ` + 'text '.repeat(10);
    dialog.appendChild(row);
  }
  return dialog;
}
