"""DiagramBuilder.add_system names where a system already is (issue 20, section 5): twice to
one builder says it is already in *this* builder (naming the system and the builder);
another builder, or a built diagram, is named as such."""
import pytest

from systems import DiagramBuildError, DiagramBuilder
from systems.primitives import Gain


def test_adding_a_system_twice_to_one_builder_names_this_builder():
    b = DiagramBuilder("plant_and_controller")
    g = b.add_system(Gain(2.0, size=1, name="k"))
    with pytest.raises(DiagramBuildError, match=r"system 'k' is already in this builder "
                                                r"\(DiagramBuilder 'plant_and_controller'\)"):
        b.add_system(g)
    unnamed = DiagramBuilder()
    h = unnamed.add_system(Gain(1.0, size=1, name="h"))
    with pytest.raises(DiagramBuildError, match=r"'h' is already in this builder \(an "
                                                r"unnamed DiagramBuilder\)"):
        unnamed.add_system(h)
    assert b.systems() == [g]                                 # nothing was added twice


def test_a_system_of_another_builder_or_diagram_is_named_as_such():
    first, second = DiagramBuilder("first"), DiagramBuilder("second")
    g = first.add_system(Gain(2.0, size=1, name="k"))
    with pytest.raises(DiagramBuildError, match=r"system 'k' is already part of another "
                                                r"builder \(DiagramBuilder 'first'\); a system "
                                                r"can be added to one diagram only"):
        second.add_system(g)
    first.export_input(g.get_input_port())
    first.export_output(g.get_output_port())
    first.build("built")
    with pytest.raises(DiagramBuildError, match=r"system 'k' is already part of diagram "
                                                r"'built'"):
        second.add_system(g)
