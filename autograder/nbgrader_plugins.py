"""nbgrader preprocessors that the course configures in nbgrader_config.py."""
from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests


class ScrubHiddenTests(ClearHiddenTests):
    """ClearHiddenTests for feedback, plus tracebacks of test cells cut to their last line.

    Under plain `nbgrader autograde` the hidden tests run in the notebook; a failing visible
    check prints a traceback whose context lines quote the hidden block that follows it.
    """

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        if utils.is_grade(cell) and cell.cell_type == "code":
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources
